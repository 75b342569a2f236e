# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Status stability over a window (ingress_status): every watched kind's status changes recorded with
their writer, and a verdict per subject (an Ingress, a Gateway, a route's parent entry), one job a file.

options.py validates the options; run.py runs one watch: a window per kind (window.py) feeding one
tracker (tracker.py), the evidence read beside them (evidence.py), each change's writer found from it
(attribution.py: the managedFields entry on the status subresource, the controller pods' status log
lines, what each controller publishes, weighed by verify/writers.py), and the whole judged (verdict.py).
Everything but run.py, window.py and evidence.py is pure.
"""
from __future__ import annotations
