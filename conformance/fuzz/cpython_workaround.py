"""Loaded by conformance/fuzz/run through SCHEMATHESIS_HOOKS.

CPython before 3.11.8 can raise "SystemError: AST constructor recursion depth mismatch"
(gh-106905) when Hypothesis parses a lambda's source to describe it, deep inside Schemathesis'
coverage phase. The description is only a repr, so on those versions lambdas are described
without parsing; nothing the fuzzer generates or checks changes.
"""
import sys

if sys.version_info[:3] < (3, 11, 8):
    from hypothesis.internal import lambda_sources

    lambda_sources._lambda_description = lambda f, *args, **kwargs: "lambda: <source not parsed>"
