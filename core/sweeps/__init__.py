"""Running many fine-tunes: a local process pool or a Dask cluster, every result into the store."""
