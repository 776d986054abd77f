"""The ground floor's framework-free part: the Docker and LLM seams and what they need.

Nothing under this package imports Django (the core-framework-free contract says so).
"""
