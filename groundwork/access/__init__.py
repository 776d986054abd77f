"""Who may do what (``roles``: the four roles, each app granting its own permissions) and what a
service refuses (``errors``: one family of refusals, ``require``, and how each refusal answers
over HTTP and on the command line)."""
