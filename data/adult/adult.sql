-- The UCI Adult table (Kohavi & Becker 1996, CC BY 4.0; see README.md here), as a data owner
-- would create it.  NOT NULL follows domain.json: only workclass, occupation and
-- native_country have missing values ('?' in the file).
CREATE TABLE adult (
	age				integer NOT NULL,
	workclass		text,
	fnlwgt			integer NOT NULL,
	education		text NOT NULL,
	education_num	integer NOT NULL,
	marital_status	text NOT NULL,
	occupation		text,
	relationship	text NOT NULL,
	race			text NOT NULL,
	sex				text NOT NULL,
	capital_gain	integer NOT NULL,
	capital_loss	integer NOT NULL,
	hours_per_week	integer NOT NULL,
	native_country	text,
	income			text NOT NULL
);
