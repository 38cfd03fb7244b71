"""Storage, without torch: reading and writing the user's files, checkpoint headers, where files live, the
shipped models, and the results store."""
