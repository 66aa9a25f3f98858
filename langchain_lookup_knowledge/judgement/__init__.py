"""The package's judgement of its own answers: one relevance score per lookup, read against the
knowledge base's own profile (``relevanceScore``, ``found``, ``relevanceLevel``)."""
