-- dpsynth 0.5.0 -> 0.6.0 (see CHANGELOG.md).
\echo Use "ALTER EXTENSION dpsynth UPDATE TO '0.6.0'" to load this file. \quit
