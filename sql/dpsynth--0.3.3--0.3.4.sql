-- dpsynth 0.3.3 -> 0.3.4: the second audit's fixes (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.3.4'" to load this file. \quit
