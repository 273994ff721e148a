"""Quick-translate tests (a package, so its conftest and fakes never shadow tests/gui's by module name)."""
