"""The app's widgets, one a file."""
