# Copyright: kindlab.ingress contributors
# GNU General Public License v3.0+ (see https://www.gnu.org/licenses/gpl-3.0.txt)
"""Test workloads: a compact spec → Deployment + Service (+ Ingresses, HTTPRoutes), one job a file.

model.py holds the types, parse.py validates a lab author's spec into them, render.py writes their objects,
summary.py says them back in the spec's words and apply.py applies them; the module entries of lab_workload and
lab_namespaces are in lab/runner.py.
"""
