# kindlab.ingress get-pip stand-in (installed by hack/sanity.sh; do not edit the copy).
# ansible-test bootstraps pip in each of its venvs by running a get-pip.py that it
# downloads from a host these machines cannot reach; it uses this cached file instead.
# Like get-pip.py, it installs pip and passes its arguments on to `pip install`.
import subprocess
import sys

args = [arg for arg in sys.argv[1:] if arg not in ('--no-setuptools', '--no-wheel')]
subprocess.check_call([sys.executable, '-m', 'ensurepip', '--upgrade', '--default-pip'])
sys.exit(subprocess.call([sys.executable, '-m', 'pip', 'install'] + args))
