"""Discrete-event simulation of a project on a calendar (simpy is imported only here)."""
