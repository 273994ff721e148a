"""The installed bundles and where they come from: locate, list, import, download, unpack, the catalogue."""
