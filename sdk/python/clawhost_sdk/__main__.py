"""``python -m clawhost_sdk build <package>``."""

from .build import main

main()
