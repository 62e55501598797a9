-- dpsynth 0.12.0 -> 0.13.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.13.0'" to load this file. \quit
