"""The command line: parsing, wiring and printing.

Only here are errors turned into exit codes.
"""
