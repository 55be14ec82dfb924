"""Puts tests/unit/oam on ``sys.path`` (pytest's prepend import mode does so for a conftest's folder),
so every oam test, in any sub-folder, imports the one shared kit as ``oamkit``."""
