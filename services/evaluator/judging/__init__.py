"""What is measured: answers, the LLM judge, retrieval and rank measures, models and prices."""
