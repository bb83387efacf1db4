\set a random_gaussian(1, 100, 2.5) + random_exponential(1, 10, 3) * 2
\set b random_zipfian(1, 1000, 1.07) % 7 - -3
\set c least(:a, :b, 9) / greatest(1, 2.5) + abs(-4) + int(3.9) + double(1) + sqrt(16) + pi() + mod(10, 4)
\sleep :b us
-- a comment with :nothing
SELECT :a::int, ':quoted', "col:x" FROM t
 WHERE x = :c;
