"""Agent recall: natural-language search over every kind of memory (see ``engine``)."""
