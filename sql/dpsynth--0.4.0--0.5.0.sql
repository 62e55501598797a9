-- dpsynth 0.4.0 -> 0.5.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.5.0'" to load this file. \quit
