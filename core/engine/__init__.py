"""The engine process: a session that holds models and runs commands, and the JSON-lines protocol the app speaks."""
