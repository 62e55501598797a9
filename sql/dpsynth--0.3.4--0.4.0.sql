-- dpsynth 0.3.4 -> 0.4.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.4.0'" to load this file. \quit
