-- dpsynth 0.8.0 -> 0.9.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.9.0'" to load this file. \quit
