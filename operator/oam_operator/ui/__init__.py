"""``oam-operator ui``: a web view of Applications on this machine, with the user's kubeconfig
(docs/ui.md). Imported only by ``cli``; it reads the cluster through ``cli``'s client and view models."""
