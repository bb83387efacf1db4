-- a comment
DELETE FROM victim WHERE id = 2;
/*!50000 DELETE */ FROM victim;
/*M!100100 UPDATE victim SET id = 3 */;
# hash
SET STATEMENT tx_read_only=0 FOR DELETE FROM victim;
SELECT 1 /* /* nested */ */;
\sleep 99999999999999999999 s
SELECT ‮ reversed;
