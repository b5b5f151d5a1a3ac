"""The names the exporter's job-log tailer imports (`LogParser`, `ParsedLog`): the reader.

Kept while `gpuslo/exporter/job_logs.py` moves (issue 23 item 6); new code imports
`gpuslo.goodput.logs.reader`.
"""

from gpuslo.goodput.logs.reader import LogReader as LogParser
from gpuslo.goodput.logs.reader import Obs, ParsedLog, parse_lines
from gpuslo.goodput.logs.tokens import number

__all__ = ["LogParser", "Obs", "ParsedLog", "number", "parse_lines"]
