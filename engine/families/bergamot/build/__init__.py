"""Build-time reading of Firefox Translations (Bergamot) models: Marian's containers, the embedded model.yml, and
the checked parameter set. Never imported by the app at run time (the frozen app excludes every build/ package)."""
