#!/usr/bin/env python3
"""Run a setuptools setup.py (pycuda's) with each extension's C++ objects compiled in parallel:
distutils compiles them one by one, which costs minutes of device time on a 16-core machine."""
import os
import sys
from concurrent.futures import ThreadPoolExecutor

import setuptools  # noqa: F401  (installs its distutils)
from setuptools._distutils import ccompiler


def compile_parallel(self, sources, output_dir=None, macros=None, include_dirs=None, debug=0,
                     extra_preargs=None, extra_postargs=None, depends=None):
    macros, objects, extra_postargs, pp_opts, build = self._setup_compile(
        output_dir, macros, include_dirs, sources, depends, extra_postargs)
    cc_args = self._get_cc_args(pp_opts, debug, extra_preargs)

    def one(obj):
        if obj in build:
            src, ext = build[obj]
            self._compile(obj, src, ext, cc_args, extra_postargs, pp_opts)

    with ThreadPoolExecutor(os.cpu_count() or 4) as ex:
        list(ex.map(one, objects))
    return objects


ccompiler.CCompiler.compile = compile_parallel
sys.argv = ["setup.py", *sys.argv[1:]]
sys.path.insert(0, os.getcwd())
with open("setup.py") as f:
    setup_py = f.read()
exec(compile(setup_py, "setup.py", "exec"), {"__name__": "__main__", "__file__": "setup.py"})
