"""`breadth`, the command line: its parser, its commands, and the tables it prints."""
