"""The run card's pieces: the run view, approval panels, following parked runs, and the timeline
(one renderer, ``static/timeline.js``, with its CSS)."""
