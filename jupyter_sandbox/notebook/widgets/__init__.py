"""The run card's browser side: ``static/card.js`` and ``static/timeline.js`` (one renderer for the live
view, the saved view and the static HTML, which ``notebook/card_html.py`` makes by running them in QuickJS).
"""
