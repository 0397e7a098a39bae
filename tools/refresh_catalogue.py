"""Rewrite coordkit/catalogue.json from the families (after a figure or a model, or one of its parameters, changes).

    .venv/bin/python tools/refresh_catalogue.py

tests/test_catalogue.py fails until the file matches what the families declare.
"""

from coordkit import catalogue

if __name__ == "__main__":
    catalogue.write()
    written = catalogue.read()
    print(f"wrote {catalogue.FILE}: {len(written.figures)} figures, {len(written.models)} models")
