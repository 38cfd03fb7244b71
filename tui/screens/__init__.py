"""The app's modal screens."""
