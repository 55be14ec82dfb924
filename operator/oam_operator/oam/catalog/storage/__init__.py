"""Storage traits: ``pvc`` (a standalone PersistentVolumeClaim) and ``volsync`` (restic backups)."""
