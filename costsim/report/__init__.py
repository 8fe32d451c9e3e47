"""Reports: tables, charts, HTML/XLSX/CSV (matplotlib, jinja2 and openpyxl only here)."""
