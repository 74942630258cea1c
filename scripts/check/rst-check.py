#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Parse each reStructuredText file with docutils; print every error and
warning (malformed tables, bad section levels, broken markup); exit 1 on
any. Usage: rst-check.py FILE..."""
import sys

import docutils.core
import docutils.utils


def main(paths):
    bad = 0
    for path in paths:
        with open(path) as f:
            text = f.read()
        try:
            docutils.core.publish_doctree(
                text, source_path=path,
                settings_overrides={'report_level': 2, 'halt_level': 2})
        except docutils.utils.SystemMessage as e:
            print(e)
            bad += 1
    return 1 if bad else 0


if __name__ == '__main__':
    sys.exit(main(sys.argv[1:]))
