"""The engine: the script's world and one run's life.

``lint`` checks a source, ``realm`` (with ``js/``) is the QuickJS world a
script runs in, ``runner`` drives one attempt (with ``requests``, ``waits``,
``answers``), ``journal`` holds the entries and the views replay reads,
``runs`` handles runs as a whole (starts and ``continueAsNew`` chains; resumes,
signals, wakes, checks and forks each in a module of its own) and ``children``
child runs; ``scheduler``, ``loop`` and ``clock`` keep time and the thread.

May import: ``jupyter_sandbox.errors``/``results``/``actions``/``calling``/``values`` and the store
contract (``stores.base``, ``stores.rows``). Never IPython, the notebook or a
store backend.
"""
