"""Object storage with resourceVersions and watch: memory, SQLite and etcd backends."""
