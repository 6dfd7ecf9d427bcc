# Claims report and HTML report.
