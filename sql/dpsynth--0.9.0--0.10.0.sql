-- dpsynth 0.9.0 -> 0.10.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.10.0'" to load this file. \quit
