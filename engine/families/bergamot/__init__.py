"""The Bergamot family (Firefox Translations models): a transformer encoder with an SSRU decoder, int8 weights with
activation alphas and a lexical shortlist. Runtime: model.py (ONNX Runtime), shortlist.py; under build/, the
converter (reading Marian checkpoints, writing the graphs)."""
