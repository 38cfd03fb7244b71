"""Results of many runs, without torch: the SQLite store, sweep grids, statistics over seeds, tables, figures."""
