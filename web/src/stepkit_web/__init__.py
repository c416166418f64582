"""stepkit_web: StepKit's reference web presenter and session service.

Participants answer any StepKit task in a browser, one server-rendered page per step, saved at
every step; hosts register tasks and read results through a JSON API. See web/README.md."""

__version__ = "0.1.0"
