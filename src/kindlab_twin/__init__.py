"""kindlab-twin: an emulated kind cluster that serves the Kubernetes API on loopback."""
