"""The OAM transform: Application document → bundle tree. Pure: no cluster access, no kopf."""
