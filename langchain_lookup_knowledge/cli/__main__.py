"""``python -m langchain_lookup_knowledge.cli``: the ``lookup-knowledge`` command."""

import sys

from langchain_lookup_knowledge.cli import main

if __name__ == "__main__":
    sys.exit(main())
