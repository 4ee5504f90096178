"""On-demand vision read of hard tables: prompt, answer checks, stored read, policies.

The model's answer is untrusted text. It is reduced to table markup (worker.vision.sanitise),
validated into a rectangular grid by the core's HTML parser, re-written by the core's HTML
writer, compared with the detector's grid (worker.vision.agreement) and stored beside it
as `<table_id>.vision.html` + `.vision.json` (worker.vision.read).
"""
