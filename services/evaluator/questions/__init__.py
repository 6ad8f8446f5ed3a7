"""Question sets: files read, references located, questions generated, and their RPCs."""
