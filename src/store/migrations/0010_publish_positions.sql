-- Where on the broker's streams the publisher's last acknowledged messages are: the stream
-- sequences the broker's acknowledgements gave for the last log row and the last public
-- message (`publish_progress.log_seq` and `public_seq`.`public_sub`). The publisher resumes
-- from them: it reads on from its own last message instead of searching the stream's end
-- for it, so no number of messages someone else put on the table's subjects hides it
-- (issue #59). 0: not known (progress saved before this column, or nothing published).

ALTER TABLE publish_progress ADD COLUMN log_stream_seq INTEGER NOT NULL DEFAULT 0;
ALTER TABLE publish_progress ADD COLUMN public_stream_seq INTEGER NOT NULL DEFAULT 0;
