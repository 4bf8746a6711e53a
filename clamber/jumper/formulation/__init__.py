"""The jumper's collocation NLP as named terms: variables, dynamics, contacts, limits, cost."""
