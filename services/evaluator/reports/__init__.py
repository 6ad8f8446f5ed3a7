"""What is read from finished experiments: comparisons, the verdict, the HTML report."""
