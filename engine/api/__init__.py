"""Qiao's local translation API: the LibreTranslate HTTP API (and Qiao's own streaming endpoint) on loopback.

`service` owns the engine side (one Translator on one worker thread, requests in arrival order), `app` is the WSGI
application (routes, LibreTranslate's fields and errors), `guard` the checks every request passes first (Host,
Origin, API key), `body` the bounded request-body readers, `documents` the in-memory document and HTML flow, and
`server` runs the app on waitress, bound to 127.0.0.1 unless the user names another address and allows it.
"""
